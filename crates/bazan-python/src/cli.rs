//! The `bazan` command of the wheel: the console script `bazan._cli:main` calls [`run_cli`],
//! which runs the Rust command line (`bazan_cli::run_with_args`) in this process, so that
//! `pip install` gives the same program as the `bazan` binary.

use pyo3::prelude::*;

/// Runs the command line with `args` (the first is the program name) and returns its exit
/// code, with the GIL released for the whole run.
#[pyfunction]
pub(crate) fn run_cli(py: Python<'_>, args: Vec<String>) -> u8 {
    py.detach(move || bazan_cli::run_with_args(args))
}

/// Registers the command-line function in the module.
pub(crate) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_cli, m)?)
}
