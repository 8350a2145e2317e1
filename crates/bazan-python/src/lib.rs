//! `bazan._bazan`: the Python extension module of Bazan. A thin binding over the facade crate
//! `bazan` (no engine logic here): it converts arguments, runs the facade's calls on a worker
//! thread with the GIL released and Ctrl-C polled ([`blocking`]), hands Arrow data to Python
//! through the C data interface ([`export`]), and maps the facade's errors to the exception
//! classes of `bazan/_errors.py` ([`errors`]). The public Python API is the `bazan` package
//! in `python/bazan`, which wraps this module.

mod blocking;
mod cli;
mod epoch;
mod errors;
mod export;
mod fork;
mod handler;
mod lake;
mod sql;
mod tsfile;

use pyo3::prelude::*;

/// Panics inside Bazan become `bazan.BazanError`s (see [`errors::from_panic`]); the default
/// hook would also print the panic and its location to stderr, so it is silenced unless
/// `BAZAN_PANIC_TRACE` is set (for debugging the extension).
fn quiet_panics() {
    if std::env::var_os("BAZAN_PANIC_TRACE").is_none() {
        std::panic::set_hook(Box::new(|_| {}));
    }
}

/// The extension module `bazan._bazan`.
#[pymodule]
fn _bazan(m: &Bound<'_, PyModule>) -> PyResult<()> {
    quiet_panics();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    lake::add(m)?;
    epoch::add(m)?;
    tsfile::add(m)?;
    cli::add(m)?;
    sql::add(m)?;
    Ok(())
}

/// The extension's Rust allocations (decoded batches, their null columns, the C data interface
/// structs of every column handed to pyarrow) come from mimalloc rather than glibc: a short
/// read of a wide lake allocates and frees a few thousand small blocks per call, and glibc
/// spent a quarter of such a call in `malloc`/`free` and in consolidating its fast bins.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
