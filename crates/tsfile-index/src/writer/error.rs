//! The error type of the writer: I/O on the temporary file, codec failures from
//! `tsfile-format`, schema mismatches and rejected data (out-of-order or duplicate
//! timestamps), each naming what was wrong and where.

use std::path::PathBuf;

/// Result alias of the writer.
pub type WriteResult<T> = std::result::Result<T, WriteError>;

/// Anything that can go wrong while writing a TsFile.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// Creating, writing, syncing or renaming a file failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done (`create`, `write`, `rename to`, …).
        action: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// An encoder or compressor refused its input (an unsupported combination, a failure).
    #[error(transparent)]
    Format(#[from] tsfile_format::Error),
    /// A timestamp is not greater than the previous one of the same device (and series, for
    /// non-aligned tree-model series).
    #[error(
        "{kind} timestamp {time} in device {device}{series}: the previous timestamp is {previous}"
    )]
    TimeOrder {
        /// `duplicate` or `out-of-order`.
        kind: &'static str,
        /// The device, in its string form.
        device: String,
        /// `, series NAME` for a non-aligned series, else empty.
        series: String,
        /// The rejected timestamp.
        time: i64,
        /// The last timestamp written for the device or series.
        previous: i64,
    },
    /// The data does not fit the registered schema (unknown table or column, wrong type,
    /// unsupported encoding, a column registered twice).
    #[error("schema: {0}")]
    Schema(String),
    /// The writer was already closed or failed earlier.
    #[error("the writer is closed")]
    Closed,
}

impl WriteError {
    pub(crate) fn schema(msg: impl Into<String>) -> Self {
        WriteError::Schema(msg.into())
    }
}
