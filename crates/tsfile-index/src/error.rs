//! The one error type of `tsfile-index`: codec errors from `tsfile-format` (which carry the
//! structure and absolute offset), I/O failures with the range asked for, and index-level
//! problems (offsets outside the index area, cycles, missing devices).

use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Anything that can go wrong while opening or reading a TsFile.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be opened or mapped.
    #[error("cannot open {}: {source}", path.display())]
    Open {
        /// The path given.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A positional read failed.
    #[error("read of {len} bytes at byte {offset} failed: {source}")]
    Io {
        /// Absolute offset of the read.
        offset: u64,
        /// Bytes asked for.
        len: u64,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A byte range outside the file was asked for (a lying offset or length in the file).
    #[error("range of {len} bytes at byte {offset} lies outside the file ({file_len} bytes)")]
    OutOfRange {
        /// Absolute offset asked for.
        offset: u64,
        /// Bytes asked for.
        len: u64,
        /// The file's length.
        file_len: u64,
    },
    /// A structure failed to decode; the inner error names the structure and offset.
    #[error(transparent)]
    Format(#[from] tsfile_format::Error),
    /// The file is not a TsFile, or not one of a supported version.
    #[error("not a readable TsFile: {reason}")]
    NotTsFile {
        /// What was found instead.
        reason: String,
    },
    /// The index is inconsistent: an offset outside the index area, a cycle, a child of the
    /// wrong kind, a chunk that does not belong to its series.
    #[error("invalid {what} at byte {offset}: {reason}")]
    Corrupt {
        /// The structure being followed.
        what: &'static str,
        /// Absolute offset of the structure (or of the bad pointer).
        offset: u64,
        /// What rule was broken.
        reason: String,
    },
    /// A valid file using a feature this reader does not implement (encryption).
    #[error("unsupported {what} at byte {offset}: {reason}")]
    Unsupported {
        /// The feature.
        what: &'static str,
        /// Absolute offset of the structure that declares it.
        offset: u64,
        /// Details.
        reason: String,
    },
    /// A table, device or measurement asked for does not exist in the file.
    #[error("{what} {name:?} not found")]
    NotFound {
        /// `table`, `device`, `column`, …
        what: &'static str,
        /// The name asked for.
        name: String,
    },
    /// A request that cannot be served (a tree-model query on a table file, …).
    #[error("{0}")]
    Request(String),
    /// Building an Arrow array or batch failed.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
}

impl Error {
    /// Shorthand for [`Error::Corrupt`].
    pub(crate) fn corrupt(what: &'static str, offset: u64, reason: impl Into<String>) -> Self {
        Error::Corrupt {
            what,
            offset,
            reason: reason.into(),
        }
    }
}
