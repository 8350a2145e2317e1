//! The one error type of `lake-locators`: every failure names the file and, where known, the
//! block, the row and the byte offset.

use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failure to index or read a data file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The file's bytes break its format's rules.
    #[error("{}: malformed {format}{}: {message}", path.display(), where_(*offset, *block, *row))]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The handler name (`csv`, `parquet`, ...).
        format: &'static str,
        /// The byte offset of the problem, where known.
        offset: Option<u64>,
        /// The block ordinal, where known.
        block: Option<u64>,
        /// The local row (0-based), where known.
        row: Option<u64>,
        /// What was wrong.
        message: String,
    },
    /// A format library reported an error.
    #[error("{}: {format}{}: {source}", path.display(), where_(None, *block, None))]
    Library {
        /// The file.
        path: PathBuf,
        /// The handler name.
        format: &'static str,
        /// The block ordinal, where known.
        block: Option<u64>,
        /// The library's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A requested column does not exist in the file.
    #[error("{}: no column named {column:?} (columns: {available})", path.display())]
    UnknownColumn {
        /// The file.
        path: PathBuf,
        /// The requested column.
        column: String,
        /// The file's columns, comma-separated.
        available: String,
    },
    /// The stored index no longer fits the file (blocks out of range, schema mismatch).
    #[error("{}: stored index does not fit the file: {message}", path.display())]
    StaleIndex {
        /// The file.
        path: PathBuf,
        /// What did not fit.
        message: String,
    },
    /// No locator handles this file.
    #[error("{}: unsupported file: {message}", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// Why, and what to do.
        message: String,
    },
    /// A read asked for something no file can give (rows out of order in
    /// [`crate::Locator::read_rows`]).
    #[error("{}: invalid read request: {message}", path.display())]
    InvalidRequest {
        /// The file.
        path: PathBuf,
        /// What was wrong with the request.
        message: String,
    },
    /// A stored schema or type name could not be parsed.
    #[error("invalid schema description: {0}")]
    Schema(String),
}

/// `text` on one line: its lines, trimmed and without the empty ones, joined by "; " (some
/// libraries explain an error over several lines, e.g. the flatbuffer verifier's trace).
fn one_line(text: String) -> String {
    if !text.contains(['\n', '\r']) {
        return text;
    }
    text.split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

fn where_(offset: Option<u64>, block: Option<u64>, row: Option<u64>) -> String {
    let mut s = String::new();
    if let Some(b) = block {
        s.push_str(&format!(" in block {b}"));
    }
    if let Some(r) = row {
        s.push_str(&format!(" at row {r}"));
    }
    if let Some(o) = offset {
        s.push_str(&format!(" at byte {o}"));
    }
    s
}

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// A malformed-file error with only a message; add positions with the builder methods.
    pub fn malformed(
        path: impl Into<PathBuf>,
        format: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Error::Malformed {
            path: path.into(),
            format,
            offset: None,
            block: None,
            row: None,
            message: one_line(message.into()),
        }
    }

    /// A library error on `path`.
    pub fn library(
        path: impl Into<PathBuf>,
        format: &'static str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        let source = source.into();
        let text = source.to_string();
        Error::Library {
            path: path.into(),
            format,
            block: None,
            // Errors are reported on one line: a library's multi-line text is joined.
            source: if text.contains(['\n', '\r']) {
                one_line(text).into()
            } else {
                source
            },
        }
    }

    /// Sets the byte offset of a [`Error::Malformed`].
    pub fn at_byte(mut self, at: u64) -> Self {
        if let Error::Malformed { offset, .. } = &mut self {
            *offset = Some(at);
        }
        self
    }

    /// Sets the block ordinal of a [`Error::Malformed`] or [`Error::Library`].
    pub fn in_block(mut self, ordinal: u64) -> Self {
        match &mut self {
            Error::Malformed { block, .. } | Error::Library { block, .. } => *block = Some(ordinal),
            _ => {}
        }
        self
    }

    /// Sets the local row of a [`Error::Malformed`].
    pub fn at_row(mut self, r: u64) -> Self {
        if let Error::Malformed { row, .. } = &mut self {
            *row = Some(r);
        }
        self
    }
}
