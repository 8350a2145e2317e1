//! The one error type of `lake-doctor`: what stops a whole run. A single path that cannot be
//! checked is not an error of the run; it is a [`crate::PathError`] in the report.

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failure that prevents the doctor from checking the lake at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The map could not be loaded, or the lake root is missing or not a directory.
    #[error(transparent)]
    Map(#[from] lake_map::Error),
}
