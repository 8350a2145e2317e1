//! The one error type of the facade: a stable [`ErrorKind`] for programs (and the Python
//! exception classes), and a one-line message that names the file and, where known, the byte
//! offset and structure.

use std::fmt;
use std::path::{Path, PathBuf};

/// Result alias of the facade.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What kind of failure an [`Error`] is. The set is stable: front ends map it to their own
/// error classes (exit codes, Python exceptions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A file, directory, map, table, device or column that does not exist.
    NotFound,
    /// The operating system refused access.
    PermissionDenied,
    /// A format, or a feature of one, that Bazan does not read.
    UnsupportedFormat,
    /// A file whose bytes break its format (the message names the byte offset where known).
    Corrupt,
    /// A file changed (size or mtime) since the map was made.
    Stale,
    /// A row outside the lake or the file.
    OutOfRange,
    /// A bad argument: an unknown column, a zero stride, an unknown encoding name.
    InvalidArgument,
    /// The run was cancelled through its [`crate::CancelToken`].
    Interrupted,
    /// Any other input/output failure.
    Io,
    /// Anything else (a failure inside a library or a handler).
    Other,
}

impl ErrorKind {
    /// The kind's stable lower-case name (`not_found`, `corrupt`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::PermissionDenied => "permission_denied",
            ErrorKind::UnsupportedFormat => "unsupported_format",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::Stale => "stale",
            ErrorKind::OutOfRange => "out_of_range",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::Io => "io",
            ErrorKind::Other => "other",
        }
    }

    fn of_io(e: &std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::NotFound => ErrorKind::NotFound,
            std::io::ErrorKind::PermissionDenied => ErrorKind::PermissionDenied,
            std::io::ErrorKind::Interrupted => ErrorKind::Interrupted,
            _ => ErrorKind::Io,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure of any Bazan operation.
///
/// `Display` is one line that already holds the whole cause chain, so it is printed as it is
/// (the engine error it came from is kept for inspection through [`Error::engine`]).
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    path: Option<PathBuf>,
    offset: Option<u64>,
    engine: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// An error's text with its sources appended the way `anyhow` prints a chain, skipping a
/// source whose text the message already holds, folded onto one line.
pub(crate) fn one_line(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let t = s.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        source = s.source();
    }
    fold(&text)
}

/// A multi-line text (a flatbuffer verifier's trace, say) joined into one line with `; `.
fn fold(text: &str) -> String {
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    parts.join("; ")
}

impl Error {
    /// A new error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: fold(&message.into()),
            path: None,
            offset: None,
            engine: None,
        }
    }

    /// An invalid-argument error.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The file the error is about, where known.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The byte offset in that file, where known.
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }

    /// The engine crate's error this one was made from, for programs that need its fields.
    pub fn engine(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.engine.as_deref()
    }

    /// An error of an I/O operation on `path`.
    pub fn io(path: impl Into<PathBuf>, e: std::io::Error) -> Self {
        let path = path.into();
        Error {
            kind: ErrorKind::of_io(&e),
            message: format!("{}: {e}", path.display()),
            path: Some(path),
            offset: None,
            engine: Some(Box::new(e)),
        }
    }

    /// Prefixes the message with `path` (when it does not name it already) and records it.
    pub fn at(mut self, path: &Path) -> Self {
        let shown = path.display().to_string();
        if !self.message.starts_with(&shown) {
            self.message = format!("{shown}: {}", self.message);
        }
        if self.path.is_none() {
            self.path = Some(path.to_path_buf());
        }
        self
    }

    fn from_engine(
        kind: ErrorKind,
        path: Option<PathBuf>,
        offset: Option<u64>,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Error {
            kind,
            message: one_line(&e),
            path,
            offset,
            engine: Some(Box::new(e)),
        }
    }
}

impl From<lake_locators::Error> for Error {
    fn from(e: lake_locators::Error) -> Self {
        use lake_locators::Error as L;
        let (kind, path, offset) = match &e {
            L::Io { path, source } => (ErrorKind::of_io(source), Some(path.clone()), None),
            L::Malformed { path, offset, .. } => (ErrorKind::Corrupt, Some(path.clone()), *offset),
            L::Library { path, .. } => (ErrorKind::Corrupt, Some(path.clone()), None),
            L::UnknownColumn { path, .. } => (ErrorKind::InvalidArgument, Some(path.clone()), None),
            L::StaleIndex { path, .. } => (ErrorKind::Stale, Some(path.clone()), None),
            L::Unsupported { path, .. } => (ErrorKind::UnsupportedFormat, Some(path.clone()), None),
            L::Schema(_) => (ErrorKind::Corrupt, None, None),
            _ => (ErrorKind::Other, None, None),
        };
        Error::from_engine(kind, path, offset, e)
    }
}

impl From<lake_locators::csv::UnknownEncoding> for Error {
    fn from(e: lake_locators::csv::UnknownEncoding) -> Self {
        Error::invalid(e.to_string())
    }
}

impl From<lake_map::Error> for Error {
    fn from(e: lake_map::Error) -> Self {
        use lake_map::Error as M;
        let (kind, path) = match e {
            M::Locator(inner) => return inner.into(),
            M::Io {
                ref path,
                ref source,
            } => (ErrorKind::of_io(source), Some(path.clone())),
            M::InvalidMap { ref path, .. } => (ErrorKind::Corrupt, Some(path.clone())),
            M::PathEscape { ref map, .. } => (ErrorKind::Corrupt, Some(map.clone())),
            M::Stale { ref path, .. } => (ErrorKind::Stale, Some(path.clone())),
            M::NoHandler { ref path, .. } => (ErrorKind::UnsupportedFormat, Some(path.clone())),
            M::RowOutOfRange { .. } => (ErrorKind::OutOfRange, None),
            M::Config(_) => (ErrorKind::InvalidArgument, None),
            M::Arrow { ref path, .. } => (ErrorKind::Corrupt, Some(path.clone())),
            M::Index { ref path, .. } => (ErrorKind::Corrupt, Some(path.clone())),
            M::Interrupted => (ErrorKind::Interrupted, None),
            _ => (ErrorKind::Other, None),
        };
        Error::from_engine(kind, path, None, e)
    }
}

impl From<lake_doctor::Error> for Error {
    fn from(e: lake_doctor::Error) -> Self {
        match e {
            lake_doctor::Error::Map(inner) => inner.into(),
            other => Error::from_engine(ErrorKind::Other, None, None, other),
        }
    }
}

impl From<tsfile_index::Error> for Error {
    fn from(e: tsfile_index::Error) -> Self {
        use tsfile_index::Error as T;
        let (kind, path, offset) = match &e {
            T::Open { path, source } => (ErrorKind::of_io(source), Some(path.clone()), None),
            T::Io { offset, source, .. } => (ErrorKind::of_io(source), None, Some(*offset)),
            T::OutOfRange { offset, .. } => (ErrorKind::Corrupt, None, Some(*offset)),
            T::Format(_) => (ErrorKind::Corrupt, None, None),
            T::NotTsFile { .. } => (ErrorKind::UnsupportedFormat, None, None),
            T::Corrupt { offset, .. } => (ErrorKind::Corrupt, None, Some(*offset)),
            T::Unsupported { offset, .. } => (ErrorKind::UnsupportedFormat, None, Some(*offset)),
            T::NotFound { .. } | T::Request(_) => (ErrorKind::InvalidArgument, None, None),
            _ => (ErrorKind::Other, None, None),
        };
        Error::from_engine(kind, path, offset, e)
    }
}

impl From<tsfile_index::writer::WriteError> for Error {
    fn from(e: tsfile_index::writer::WriteError) -> Self {
        use tsfile_index::writer::WriteError as W;
        let (kind, path) = match &e {
            W::Io { path, source, .. } => (ErrorKind::of_io(source), Some(path.clone())),
            W::TimeOrder { .. } | W::Schema(_) => (ErrorKind::InvalidArgument, None),
            _ => (ErrorKind::Other, None),
        };
        Error::from_engine(kind, path, None, e)
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::from_engine(ErrorKind::Other, None, None, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_engine_errors() {
        let e: Error = lake_map::Error::RowOutOfRange {
            row: 9,
            total_rows: 3,
        }
        .into();
        assert_eq!(e.kind(), ErrorKind::OutOfRange);
        assert_eq!(e.to_string(), "row 9 is past the end of the lake (3 rows)");
        let e: Error = lake_locators::Error::Malformed {
            path: "a.csv".into(),
            format: "csv",
            offset: Some(17),
            block: None,
            row: Some(2),
            message: "bad quote".into(),
        }
        .into();
        assert_eq!(e.kind(), ErrorKind::Corrupt);
        assert_eq!(e.offset(), Some(17));
        assert_eq!(e.path(), Some(Path::new("a.csv")));
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = Error::io("x/y.parquet", missing);
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert!(e.to_string().starts_with("x/y.parquet: "));
    }

    #[test]
    fn messages_are_one_line_and_name_the_file_once() {
        let e = Error::new(ErrorKind::Corrupt, "first\n  second\n").at(Path::new("f.tsfile"));
        assert_eq!(e.to_string(), "f.tsfile: first; second");
        let e = Error::new(ErrorKind::Corrupt, "first").at(Path::new("f.tsfile"));
        assert_eq!(e.to_string(), "f.tsfile: first");
    }
}
