//! Facade errors as Python exceptions: one class per [`bazan::ErrorKind`], defined in
//! `bazan/_errors.py` (so that a class can also be a `FileNotFoundError`, an `IndexError` or a
//! `ValueError`), each instance carrying `.kind`, `.path` and `.offset`. An exception raised by
//! a Python handler travels through the engine unchanged and is raised again as itself.

use std::any::Any;

use bazan::{Error, ErrorKind};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;

/// The module that defines the exception classes.
static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS
        .get_or_try_init(py, || Ok(py.import("bazan._errors")?.unbind()))
        .map(|m| m.bind(py))
}

/// The name of the Python class for `kind` (in `bazan._errors`).
pub(crate) fn class_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::NotFound => "NotFoundError",
        ErrorKind::PermissionDenied => "PermissionDeniedError",
        ErrorKind::UnsupportedFormat => "UnsupportedFormatError",
        ErrorKind::Corrupt => "CorruptFileError",
        ErrorKind::Stale => "StaleFileError",
        ErrorKind::OutOfRange => "OutOfRangeError",
        ErrorKind::InvalidArgument => "InvalidArgumentError",
        ErrorKind::Io => "BazanIOError",
        _ => "BazanError",
    }
}

/// An instance of the class `name` of `bazan._errors` with `message` and the attributes
/// `kind`, `path` and `offset`.
fn make(
    py: Python<'_>,
    name: &str,
    kind: &str,
    message: &str,
    path: Option<String>,
    offset: Option<u64>,
) -> PyErr {
    let built = (|| -> PyResult<PyErr> {
        let class = errors_module(py)?.getattr(name)?;
        let exc = class.call1((message,))?;
        exc.setattr("kind", kind)?;
        exc.setattr("path", path)?;
        exc.setattr("offset", offset)?;
        Ok(PyErr::from_value(exc))
    })();
    // Without `bazan._errors` (never in an installed package) the message still gets out.
    built.unwrap_or_else(|e| PyRuntimeError::new_err(format!("{message} ({e})")))
}

/// The Python exception a Python handler raised inside `e`, when there is one.
fn handler_exception(py: Python<'_>, e: &Error) -> Option<PyErr> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = match e.engine() {
        Some(engine) => Some(engine),
        None => None,
    };
    while let Some(s) = source {
        if let Some(err) = s.downcast_ref::<PyErr>() {
            return Some(err.clone_ref(py));
        }
        source = s.source();
    }
    None
}

/// The Python exception for a facade error.
pub(crate) fn to_py(py: Python<'_>, e: Error) -> PyErr {
    if let Some(err) = handler_exception(py, &e) {
        return err;
    }
    let path = e.path().map(|p| p.display().to_string());
    make(
        py,
        class_name(e.kind()),
        e.kind().as_str(),
        &e.to_string(),
        path,
        e.offset(),
    )
}

/// A `bazan.BazanError` for a failure inside the binding itself.
pub(crate) fn internal(py: Python<'_>, message: impl AsRef<str>) -> PyErr {
    make(py, "BazanError", "other", message.as_ref(), None, None)
}

/// A `bazan.InvalidArgumentError` (a `ValueError`) naming the argument.
pub(crate) fn invalid(py: Python<'_>, message: impl AsRef<str>) -> PyErr {
    make(
        py,
        "InvalidArgumentError",
        "invalid_argument",
        message.as_ref(),
        None,
        None,
    )
}

/// A `bazan.OutOfRangeError` (an `IndexError`).
pub(crate) fn out_of_range(py: Python<'_>, message: impl AsRef<str>) -> PyErr {
    make(
        py,
        "OutOfRangeError",
        "out_of_range",
        message.as_ref(),
        None,
        None,
    )
}

/// A `bazan.BazanError` for a panic inside Bazan: its message, never a backtrace.
pub(crate) fn from_panic(py: Python<'_>, payload: Box<dyn Any + Send>) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown failure".into());
    internal(
        py,
        format!("internal error in bazan (please report it): {what}"),
    )
}

/// Converts a facade result.
pub(crate) trait IntoPy<T> {
    /// The value, or the Python exception for the error.
    fn py(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPy<T> for bazan::Result<T> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}
