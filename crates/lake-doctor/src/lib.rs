//! `lake-doctor`: drift detection between a Lake Map and the files on disk.
//!
//! Layer 3 of Bazan's lake stack. It compares a loaded map with the lake as it is now, with
//! the same discovery rules and handlers as map creation, and reports each file as healthy,
//! modified, unindexed or missing. It only reads: it must never write the map or any file.
//!
//! The flow: [`diagnose_lake`] loads `<root>/.br_map.bazan` and calls [`diagnose`], which
//! walks the lake with `lake-map`'s own discovery ([`lake_map::discovery::discover_lenient`],
//! so "unindexed" means exactly what a new map would add), compares every entry's stored
//! fingerprint with the file now (size and mtime from the one `stat` discovery already made;
//! with fingerprint `blake3` also the content digest, hashed in parallel) and returns a
//! [`DoctorReport`]. A path that cannot be checked is a [`PathError`] in the report, never a
//! failure of the whole run and never counted as healthy.

#![forbid(unsafe_code)]

pub mod check;
pub mod error;
pub mod report;

pub use check::{DoctorOptions, Progress, ProgressFn, diagnose, diagnose_lake};
pub use error::{Error, Result};
pub use report::{DoctorReport, ErrorKind, PathError, Verdict};
