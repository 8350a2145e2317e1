//! Integration tests of `lake-doctor`.

mod common;
mod conformance;
mod errors;
mod states;
