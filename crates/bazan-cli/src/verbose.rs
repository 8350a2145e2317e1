//! `--verbose`: the debug lines of Bazan's crates (logged with the `log` crate: the map
//! loaded, the files indexed, what an update kept and re-indexed, the handler of a file
//! read) printed to stderr as `debug: TARGET: MESSAGE`. Lines of other libraries (DataFusion,
//! object stores) are left out.

use std::sync::atomic::{AtomicBool, Ordering};

/// Prints the debug lines of this run while [`VERBOSE`] is set.
struct StderrLogger;

/// Set for a run with `--verbose` (a process running the command line more than once, as
/// the Python package's `bazan` command may, prints only the verbose runs' lines).
static VERBOSE: AtomicBool = AtomicBool::new(false);

static LOGGER: StderrLogger = StderrLogger;

/// The crates whose lines `--verbose` prints.
const OURS: [&str; 3] = ["bazan", "lake_", "tsfile_"];

impl log::Log for StderrLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        VERBOSE.load(Ordering::Relaxed)
            && metadata.level() <= log::Level::Debug
            && OURS.iter().any(|p| metadata.target().starts_with(p))
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            eprintln!("debug: {}: {}", record.target(), record.args());
        }
    }

    fn flush(&self) {}
}

/// Turns the debug lines on for this run (`verbose`) or off. The logger is installed once
/// per process; when another one is already installed (an embedding program's), its
/// settings are left alone.
pub(crate) fn init(verbose: bool) {
    VERBOSE.store(verbose, Ordering::Relaxed);
    if verbose && log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(log::LevelFilter::Debug);
    }
}
