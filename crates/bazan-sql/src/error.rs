//! Errors of the SQL front end: a bad query (DataFusion's message; the CLI's exit 2), a lake
//! or TsFile error from the facade (with its kind, e.g. `Stale` naming the changed file), or
//! another failure while running.

use datafusion::common::DataFusionError;

/// A SQL error; see the module documentation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The query does not parse or plan (syntax, unknown table or column, types).
    #[error("{0}")]
    Query(String),
    /// A lake or TsFile error, as the facade reports it (kind, path).
    #[error(transparent)]
    Bazan(#[from] bazan::Error),
    /// The query failed while running for another reason.
    #[error("{0}")]
    Execution(String),
    /// Anything else (the runtime could not start, a bad Arrow stream).
    #[error("{0}")]
    Other(String),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// True for [`Error::Query`]: the user's query is at fault.
    pub fn is_query(&self) -> bool {
        matches!(self, Error::Query(_))
    }

    /// The facade error inside a DataFusion error, if any.
    fn find_bazan(e: &DataFusionError) -> Option<bazan::Error> {
        let mut at: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(cur) = at {
            if let Some(b) = cur.downcast_ref::<bazan::Error>() {
                return Some(copy(b));
            }
            if let Some(DataFusionError::External(inner)) = cur.downcast_ref::<DataFusionError>()
                && let Some(b) = inner.downcast_ref::<bazan::Error>()
            {
                return Some(copy(b));
            }
            at = cur.source();
        }
        None
    }

    /// An error while parsing or planning: the query's fault, unless the facade failed.
    pub(crate) fn from_plan(e: DataFusionError) -> Self {
        if let Some(b) = Error::find_bazan(&e) {
            return Error::Bazan(b);
        }
        match e.find_root() {
            DataFusionError::Execution(_)
            | DataFusionError::IoError(_)
            | DataFusionError::ResourcesExhausted(_)
            | DataFusionError::External(_) => Error::Execution(e.strip_backtrace()),
            _ => Error::Query(e.strip_backtrace()),
        }
    }

    /// An error while running: the facade's when it is one, else an execution error (some
    /// type errors only show at run time and stay DataFusion's message).
    pub(crate) fn from_run(e: DataFusionError) -> Self {
        if let Some(b) = Error::find_bazan(&e) {
            return Error::Bazan(b);
        }
        match e.find_root() {
            DataFusionError::Plan(_)
            | DataFusionError::SQL(..)
            | DataFusionError::SchemaError(..)
            | DataFusionError::NotImplemented(_) => Error::Query(e.strip_backtrace()),
            _ => Error::Execution(e.strip_backtrace()),
        }
    }
}

/// A facade error with the same kind, message and path (it is not `Clone`).
fn copy(b: &bazan::Error) -> bazan::Error {
    let e = bazan::Error::new(b.kind(), b.to_string());
    match b.path() {
        Some(p) => e.at(p),
        None => e,
    }
}

impl From<DataFusionError> for Error {
    fn from(e: DataFusionError) -> Self {
        Error::from_plan(e)
    }
}
