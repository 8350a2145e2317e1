//! The one error type of `lake-map`: every failure names the lake, the map file or the data
//! file it is about, and what was wrong.

use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failure to discover, index, store, load or read a lake.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or directory could not be read, written or inspected.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A data file's locator failed (unreadable or malformed file, unknown column, ...).
    #[error(transparent)]
    Locator(#[from] lake_locators::Error),
    /// The file is not a lake map, or the map is damaged.
    #[error("{}: not a valid lake map: {message}", path.display())]
    InvalidMap {
        /// The map file.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
    /// A map entry's path is absolute, has `.`/`..` segments or resolves outside the root.
    #[error("{}: entry path {entry:?} escapes the lake root: {message}", map.display())]
    PathEscape {
        /// The map file (or lake root).
        map: PathBuf,
        /// The offending entry path.
        entry: String,
        /// Why it was refused.
        message: String,
    },
    /// A data file changed (size or mtime) or disappeared since the map was made.
    #[error("{}: stale map entry: {message} (rebuild the map with `bazan map create`)", path.display())]
    Stale {
        /// The data file.
        path: PathBuf,
        /// What differs.
        message: String,
    },
    /// No handler is registered for an entry's format or extension.
    #[error("{}: no handler for format {format:?}", path.display())]
    NoHandler {
        /// The data file.
        path: PathBuf,
        /// The stored format name.
        format: String,
    },
    /// A global row outside the lake.
    #[error("row {row} is past the end of the lake ({total_rows} rows)")]
    RowOutOfRange {
        /// The requested global row.
        row: u64,
        /// Rows in the lake.
        total_rows: u64,
    },
    /// An invalid configuration value (stride 0, unknown fingerprint mode, ...).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// Arrow could not encode or decode the map's record batch.
    #[error("{}: arrow: {source}", path.display())]
    Arrow {
        /// The map file.
        path: PathBuf,
        /// Arrow's error.
        source: arrow_schema::ArrowError,
    },
    /// A locator's index of a file is inconsistent (blocks do not add up, wrong row count).
    #[error("{}: {message}", path.display())]
    Index {
        /// The data file.
        path: PathBuf,
        /// What did not add up.
        message: String,
    },
    /// The run was cancelled (its cancel flag was set); nothing was written.
    #[error("interrupted")]
    Interrupted,
    /// Some files failed to index (reported together, never silently).
    #[error("{} file(s) could not be indexed; first: {first}", count)]
    IndexFailures {
        /// How many files failed.
        count: usize,
        /// The first failure, with its path.
        first: String,
    },
}

impl Error {
    /// An I/O error about `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// An invalid-map error about `path`.
    pub fn invalid(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Error::InvalidMap {
            path: path.into(),
            message: message.into(),
        }
    }
}
